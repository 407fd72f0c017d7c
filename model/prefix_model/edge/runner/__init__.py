"""The adapter protocol in one place (spec/vectors.md §6, §10): the reference consumer, the protocol over a process boundary, the model serving it, and ``conform``.

- ``consumer`` the reference consumer: the adapter, checker and reader protocols another
  implementation mirrors, the model's own, ``replay`` and ``consume`` (in process)
- ``protocol``, ``server``, ``client`` the same protocol as JSON lines over a child process
- ``run``, ``baseline`` ``prefix-model conform``: the vectors replayed through an adapter command
"""
