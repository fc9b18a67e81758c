"""Validation and timing harness: sandboxed candidate evaluation, anti-cheat, timing, ceilings, aggregation."""
