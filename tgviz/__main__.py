from tgviz.cli import console

console()
