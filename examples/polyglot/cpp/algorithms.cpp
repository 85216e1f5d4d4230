#include <string>
#include <vector>

long long gcd(long long a, long long b) {
    while (b != 0) {
        long long t = a % b;
        a = b;
        b = t;
    }
    return a < 0 ? -a : a;
}

unsigned long long fibonacci(int n) {
    unsigned long long a = 0, b = 1;
    for (int i = 0; i < n; ++i) {
        unsigned long long next = a + b;
        a = b;
        b = next;
    }
    return a;
}

int binary_search(const std::vector<int>& items, int target) {
    int lo = 0, hi = static_cast<int>(items.size()) - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if (items[mid] == target) return mid;
        if (items[mid] < target) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

std::vector<std::string> fizzbuzz(int n) {
    std::vector<std::string> out;
    for (int i = 1; i <= n; ++i) {
        if (i % 15 == 0) out.push_back("FizzBuzz");
        else if (i % 3 == 0) out.push_back("Fizz");
        else if (i % 5 == 0) out.push_back("Buzz");
        else out.push_back(std::to_string(i));
    }
    return out;
}

class Matrix {
public:
    Matrix(int rows, int cols) : rows_(rows), cols_(cols), data_(rows * cols, 0.0) {}

    Matrix transpose() const {
        Matrix t(cols_, rows_);
        for (int r = 0; r < rows_; ++r)
            for (int c = 0; c < cols_; ++c)
                t.data_[c * rows_ + r] = data_[r * cols_ + c];
        return t;
    }

private:
    int rows_, cols_;
    std::vector<double> data_;
};
