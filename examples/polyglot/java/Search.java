package polyglot;

public final class Search {
    private Search() {}

    public static int binarySearch(int[] items, int target) {
        int lo = 0;
        int hi = items.length - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            if (items[mid] == target) {
                return mid;
            } else if (items[mid] < target) {
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        return -1;
    }

    public static int maxIndex(int[] items) {
        int best = 0;
        for (int i = 1; i < items.length; i++) {
            if (items[i] > items[best]) {
                best = i;
            }
        }
        return best;
    }
}
