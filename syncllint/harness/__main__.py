"""``python -m syncllint.harness [--json] ...``: the verify command without the CLI group."""

from syncllint.harness.command import verify

verify(prog_name="syncllint verify")
