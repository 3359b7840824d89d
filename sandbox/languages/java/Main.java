// Compiled once at image build time: javac's class-data-sharing archive records what javac loads for it.
import java.util.*;
import java.util.stream.*;
import java.math.BigInteger;
import org.javatuples.*;

class Problem {
    static long f(ArrayList<Long> xs) {
        long s = 0;
        for (long x : xs) s += x;
        return s;
    }

    public static void main(String[] args) {
        assert f(new ArrayList<Long>(Arrays.asList((long)1L, (long)2L))) == 3L;
        Pair<Long, String> p = Pair.with(1L, "a");
        Optional<Integer> o = Optional.of(3);
        Map<String, Integer> m = new HashMap<>();
        m.put("a", 1);
        List<Integer> l = new ArrayList<>(List.of(3, 1, 2));
        Collections.sort(l);
        System.out.println(p + String.format("%d %s %s", 3, o, m)
            + l.stream().map(String::valueOf).collect(Collectors.joining(",")) + BigInteger.ONE);
    }
}
