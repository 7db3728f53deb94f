"""Owns the design of a batch and of a campaign: ``plan_matches`` and its rules (``plan``),
several scopes at once (``scopes``), the balance checks (``checks``), the oracle design with
known strengths (``oracle``) and simulated campaigns (``simulate``); imports
``sampling.board``, ``sampling.judges`` and ``sampling.picks``."""

__all__: list[str] = []
