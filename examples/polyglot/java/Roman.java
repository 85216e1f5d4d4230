package polyglot;

import java.util.Map;

public final class Roman {
    private static final int[] VALUES = {1000, 900, 500, 400, 100, 90, 50, 40, 10, 9, 5, 4, 1};
    private static final String[] SYMBOLS = {"M", "CM", "D", "CD", "C", "XC", "L", "XL", "X", "IX", "V", "IV", "I"};
    private static final Map<Character, Integer> SYMBOL_VALUES =
        Map.of('I', 1, 'V', 5, 'X', 10, 'L', 50, 'C', 100, 'D', 500, 'M', 1000);

    private Roman() {}

    /** Writes a number from 1 to 3999 in Roman numerals. */
    public static String toRoman(int number) {
        if (number < 1 || number > 3999) {
            throw new IllegalArgumentException("out of range: " + number);
        }
        StringBuilder parts = new StringBuilder();
        for (int i = 0; i < VALUES.length; i++) {
            while (number >= VALUES[i]) {
                parts.append(SYMBOLS[i]);
                number -= VALUES[i];
            }
        }
        return parts.toString();
    }

    /** The value of a Roman numeral; a smaller symbol before a larger one is subtracted (IV = 4). */
    public static int fromRoman(String text) {
        int total = 0;
        for (int i = 0; i < text.length(); i++) {
            int value = SYMBOL_VALUES.get(text.charAt(i));
            if (i + 1 < text.length() && SYMBOL_VALUES.get(text.charAt(i + 1)) > value) {
                total -= value;
            } else {
                total += value;
            }
        }
        return total;
    }

    /** True when the text is a Roman numeral written the usual way. */
    public static boolean isRoman(String text) {
        if (text.isEmpty()) {
            return false;
        }
        for (char symbol : text.toCharArray()) {
            if (!SYMBOL_VALUES.containsKey(symbol)) {
                return false;
            }
        }
        int value = fromRoman(text);
        return value >= 1 && value <= 3999 && toRoman(value).equals(text);
    }
}
