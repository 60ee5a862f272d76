// java-first: a Morris Arena bot in Java that knows no rules.
//
// Its bot.yaml says `legal_moves: true`, so just before each `go` the referee sends
// `legalmoves <m1> <m2> ...` listing every legal turn (captures included, e.g. d6xa1).
// The bot remembers the first move of the last such line and plays it on `go`.
// Built by the referee from bot.yaml's `build:` line (javac, then jar).
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;

public class Bot {
    static void send(String line) {
        System.out.println(line);
        System.out.flush(); // the referee waits for each line: flush it
    }

    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(
                new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String firstMove = "";
        String line;
        while ((line = in.readLine()) != null) {
            String[] words = line.trim().split("\\s+");
            switch (words[0]) {
                case "morris":
                    send("id name java-first");
                    send("id author Morris Arena examples");
                    send("morrisok");
                    break;
                case "isready":
                    send("readyok");
                    break;
                case "legalmoves":
                    firstMove = words.length > 1 ? words[1] : "";
                    break;
                case "go":
                    send("bestmove " + firstMove);
                    break;
                case "quit":
                    return;
                default: // newgame, position, setoption, gameover: nothing to do here
            }
        }
    }
}
