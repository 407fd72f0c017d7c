"""session-prefix-model: the executable reference model of the deepseek-harness session prefix.

One package per part of ``spec/SPEC.md``; each imports only the ones above it:

- ``core`` (§1–§7) the session model: lossless JSON values, the event envelope and the
  append-only log, the surface, ``derive_messages``, request headers and the record rule,
  request reconstruction, fork
- ``formats`` (§8) what a file's lines mean: event lines, the persisted header line and packed
  rows, and every format rule, worded once (``formats.rules``); the plain event form
  the fast lane reads (``formats.plain``)
- ``conformance`` (§9) the fold that checks a log and its captured requests, every finding
  built there with the core's functions; its screens, each tied by a contract to the spec
  function it shortcuts; the vacuity rules
- ``loop`` (§10–§13) the agent loop as a transition system, the session-prefix waterfall,
  streamed replies, the compaction service, the token meter, the properties of every run
  (``loop.properties``: the conformance fold over the run, and what only the ghost trace shows),
  and the faulty variants
- ``review`` (§14) the design review: designs, their scenario, measures, comparison, claims
- ``vectors`` (§15) the conformance vectors' cases: scripts, codec, persisted-form cases
- ``edge`` (§15–§22) everything that does I/O: file readers and writers, the
  vectors, the adapter runner, the checker driver and the command line

Local names used throughout: ``e`` an Event, ``h`` an EpochHeader, ``m`` a message; public
parameters use full words. Rejections are values (``core.contracts.Rejection``) carrying a spec
ID; ``RejectedError`` is raised only where the harness itself throws (append, freeze).
"""

__version__ = "0.1.0"
