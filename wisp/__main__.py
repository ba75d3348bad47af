from wisp.cli import main

main()
