"""The operator suite: 37 operators (reference, input maker, cases, tolerance, frozen initial kernel) and its checks."""
