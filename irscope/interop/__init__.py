"""Other tools' trace formats ↔ irscope trajectories (docs/tritonparse.md)."""
