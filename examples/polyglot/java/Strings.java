package polyglot;

import java.util.HashMap;
import java.util.Map;

public final class Strings {
    private Strings() {}

    public static String reverse(String s) {
        return new StringBuilder(s).reverse().toString();
    }

    public static Map<String, Integer> wordCount(String text) {
        Map<String, Integer> counts = new HashMap<>();
        for (String word : text.toLowerCase().split("\\s+")) {
            if (word.isEmpty()) {
                continue;
            }
            counts.merge(word, 1, Integer::sum);
        }
        return counts;
    }

    public static boolean isBlank(String s) {
        return s == null || s.trim().isEmpty();
    }
}
