/* c-first: a Morris Arena bot in C that knows no rules.
 *
 * Its bot.yaml says `legal_moves: true`, so just before each `go` the referee sends
 * `legalmoves <m1> <m2> ...` listing every legal turn (captures included, e.g. d6xa1).
 * The bot remembers the first move of the last such line and plays it on `go`.
 * Built by the referee from bot.yaml's `build:` line (cc -O2 -o bot bot.c).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void send(const char *line) {
    printf("%s\n", line);
    fflush(stdout); /* the referee waits for each line: flush it */
}

/* the first word of text (after leading blanks), copied into out */
static void first_word(const char *text, char *out, size_t size) {
    size_t n = 0;
    text += strspn(text, " \t");
    while (text[n] && !strchr(" \t\r\n", text[n]) && n + 1 < size) {
        out[n] = text[n];
        n++;
    }
    out[n] = '\0';
}

int main(void) {
    char *line = NULL;
    size_t cap = 0;
    char word[64], move[64] = "";
    char reply[96];

    while (getline(&line, &cap, stdin) != -1) {
        first_word(line, word, sizeof word);
        if (strcmp(word, "morris") == 0) {
            send("id name c-first");
            send("id author Morris Arena examples");
            send("morrisok");
        } else if (strcmp(word, "isready") == 0) {
            send("readyok");
        } else if (strcmp(word, "legalmoves") == 0) {
            first_word(line + strspn(line, " \t") + strlen("legalmoves"), move, sizeof move);
        } else if (strcmp(word, "go") == 0) {
            snprintf(reply, sizeof reply, "bestmove %s", move);
            send(reply);
        } else if (strcmp(word, "quit") == 0) {
            break;
        }
    }
    free(line);
    return 0;
}
