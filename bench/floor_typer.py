"""A minimal one-command typer app: what any typer CLI costs to start (a floor for
`bench/cold.py` and `bench/ratios.py`)."""

import typer

app = typer.Typer(add_completion=False)


@app.command()
def pending() -> None:
    """List nothing."""
    print("Nothing waits for you.")


if __name__ == "__main__":
    app()
