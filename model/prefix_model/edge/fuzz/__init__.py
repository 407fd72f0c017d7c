"""Differential testing (spec §19): scripts generated from the model, run in lockstep through an implementation's adapter.

- ``grammar`` the action language drawn at random, move by move, for the world the model is in
- ``generate`` scripts drawn by walking the model, aimed at the outcomes a campaign has not reached
- ``lockstep`` one script through the model and an adapter, replies compared as JSON text
- ``shrink`` a diverging script made small with the implementation as the oracle
- ``campaign`` scripts through several adapter processes, divergences grouped, shrunk, judged by a baseline
- ``report`` the reports (text, JSON, JUnit) and the divergences saved as vector cases
- ``command`` the ``prefix-model fuzz`` command line
"""
