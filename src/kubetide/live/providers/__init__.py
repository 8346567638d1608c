"""Cloud providers behind the cloud-provider port: ``kwok`` and ``aws`` for ``kubetide run``, and the
snapshot cloud ``kubetide explain --snapshot`` runs one loop on.

Each provider is an adapter: it may use client libraries and do I/O, and the decision cores never
import it (an import-linter contract checks that); the ``run`` commands pick one by ``--cloud-provider``.
"""
