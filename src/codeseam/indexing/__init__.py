"""The index pipeline: a repository in, chunk rows, vectors and a manifest out.

``pipeline`` (what a run is built with: the chunk budget, the chunker id, the fingerprint
that decides re-chunking), ``plan`` (the pure re-sync plan and the crash-safe write order),
``run`` (``IndexRun``: one run over one repo), ``moves`` (renamed files keep their vectors),
``backfill`` (vectors for the rows written keyword-only), ``report`` (what a run did, and the
dry run). It imports no skin; the query side only for the weak-evidence floor a run measures
(``query.evidence.measure_null``).
"""
