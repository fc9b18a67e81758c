"""patterns: pattern cards (data), matcher, mechanical appliers and retrospective synthesis."""
