"""The query pipeline: a query in, ranked hits (and the weak-evidence flag) out.

``analysis`` (what the query's words are to BM25, which definitions it names), ``fusion``
(RRF and weighted fusion, span de-duplication), ``rank`` (the ranking levers after fusion),
``pieces`` (pieces of split definitions merged and expanded), ``evidence`` (the weak-evidence
score and its calibrated thresholds), ``retrieve`` (the one function that runs them over a
store and an embedder). Nothing here imports the index pipeline or a skin.
"""
