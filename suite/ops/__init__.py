"""One module per suite operator, each defining OPERATOR (suite.operator.Operator)."""
