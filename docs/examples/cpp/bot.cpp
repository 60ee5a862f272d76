// cpp-first: a Morris Arena bot in C++ that knows no rules.
//
// Its bot.yaml says `legal_moves: true`, so just before each `go` the referee sends
// `legalmoves <m1> <m2> ...` listing every legal turn (captures included, e.g. d6xa1).
// The bot remembers the first move of the last such line and plays it on `go`.
// Built by the referee from bot.yaml's `build:` line (make, with the Makefile here).
#include <iostream>
#include <sstream>
#include <string>

static void send(const std::string &line) {
    std::cout << line << std::endl;  // std::endl flushes: the referee waits for each line
}

int main() {
    std::ios::sync_with_stdio(false);
    std::string line, word, first_move;
    while (std::getline(std::cin, line)) {
        std::istringstream words(line);
        if (!(words >> word)) continue;
        if (word == "morris") {
            send("id name cpp-first");
            send("id author Morris Arena examples");
            send("morrisok");
        } else if (word == "isready") {
            send("readyok");
        } else if (word == "legalmoves") {
            words >> first_move;
        } else if (word == "go") {
            send("bestmove " + first_move);
        } else if (word == "quit") {
            break;
        }
    }
    return 0;
}
