"""One module per suite operator, each defining OPERATOR (bench.operator.Operator)."""
