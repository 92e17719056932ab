from anima.cli import main

main()
