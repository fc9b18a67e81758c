"""`ladder` subcommands: one module each, defining COMMAND (ladder.commands.base.Command)."""
