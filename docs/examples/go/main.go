// gofirst: a Morris Arena bot in Go that knows no rules.
//
// Its bot.yaml says `legal_moves: true`, so just before each `go` the referee sends
// `legalmoves <m1> <m2> ...` listing every legal turn (captures included, e.g. d6xa1).
// The bot remembers the first move of the last such line and plays it on `go`.
// Built by the referee from bot.yaml's `build:` line (go build -o bot .).
package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<16), 1<<20) // a legalmoves line can be long
	out := bufio.NewWriter(os.Stdout)
	send := func(line string) {
		fmt.Fprintln(out, line)
		out.Flush() // the referee waits for each line: flush it
	}
	firstMove := ""
	for in.Scan() {
		words := strings.Fields(in.Text())
		if len(words) == 0 {
			continue
		}
		switch words[0] {
		case "morris":
			send("id name gofirst")
			send("id author Morris Arena examples")
			send("morrisok")
		case "isready":
			send("readyok")
		case "legalmoves":
			if len(words) > 1 {
				firstMove = words[1]
			}
		case "go":
			send("bestmove " + firstMove)
		case "quit":
			return
		}
	}
}
