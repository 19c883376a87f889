"""Fuzzing the service (tests/test_fuzz.py runs all of it, bounded, in CI):

- malformed.py: malformed requests to every RPC and the judge of the answers,
  shared by tests/test_fuzz.py and bench/soak.py (both put tests/ on sys.path
  and import it as fuzz.malformed);
- fuzz_view.py, fuzz_record.py: coverage-guided fuzzers (atheris) of the view
  and record decoders, over the seed corpora in corpus/view and corpus/record;
  mutator.py: their custom mutator (structural half the time);
- make_corpus.py: writes those corpora's seed files from real messages.
"""
