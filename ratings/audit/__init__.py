"""Owns the judge audit (position bias, self-preference, agreement); imports every part below
the command line but plot."""

from ratings.core.lazy import lazy_exports

__all__ = ["Audit", "AuditWarning", "audit"]
__getattr__ = lazy_exports(__name__, dict.fromkeys(__all__, "ratings.audit.judge_audit"))
