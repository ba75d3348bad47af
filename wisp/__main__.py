from wisp.cli import run

run()
