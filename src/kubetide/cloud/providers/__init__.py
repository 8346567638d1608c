"""Real cloud providers behind the cloud-provider port (``kwok``; ``aws`` to come).

Each provider is an adapter: it may use client libraries and do I/O, and the decision cores never
import it (an import-linter contract checks that); the ``run`` commands pick one by ``--cloud-provider``.
"""
