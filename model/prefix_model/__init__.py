"""session-prefix-model: the executable reference model of the deepseek-harness session prefix.

The pure core, one module per chapter of ``spec/SPEC.md``:

- ``json_values`` (§1) lossless JSON values, JavaScript text form, JSON equality
- ``events``, ``log`` (§2) the event envelope and the append-only log
- ``surface`` (§3) the surface fold: append and positional replace
- ``derive`` (§4) ``derive_messages``
- ``headers``, ``request_log`` (§5) ``EpochHeader``, ``canonical_header``, ``header_equals``,
  ``fold_request_header``, ``record_request_header``
- ``requests`` (§6) the loop request and its reconstruction from a log
- ``fork`` (§7) fork

The edge (I/O) is ``formats/`` (§8: reading and writing harness event lines) and ``cli`` (§9).

Local names used throughout: ``e`` an Event, ``h`` an EpochHeader, ``m`` a message; public
parameters use full words. Rejections are values (``contracts.Rejection``) carrying a spec ID;
``RejectedError`` is raised only where the harness itself throws (append, freeze).
"""

__version__ = "0.1.0"
