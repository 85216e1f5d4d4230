package algo

import (
	"fmt"
	"strings"
)

var romanValues = []int{1000, 900, 500, 400, 100, 90, 50, 40, 10, 9, 5, 4, 1}
var romanSymbols = []string{"M", "CM", "D", "CD", "C", "XC", "L", "XL", "X", "IX", "V", "IV", "I"}
var symbolValues = map[byte]int{'I': 1, 'V': 5, 'X': 10, 'L': 50, 'C': 100, 'D': 500, 'M': 1000}

// ToRoman writes a number from 1 to 3999 in Roman numerals.
func ToRoman(number int) (string, error) {
	if number < 1 || number > 3999 {
		return "", fmt.Errorf("out of range: %d", number)
	}
	var parts strings.Builder
	for i, value := range romanValues {
		for number >= value {
			parts.WriteString(romanSymbols[i])
			number -= value
		}
	}
	return parts.String(), nil
}

// FromRoman returns the value of a Roman numeral; a smaller symbol before a larger one is subtracted (IV = 4).
func FromRoman(text string) int {
	total := 0
	for i := 0; i < len(text); i++ {
		value := symbolValues[text[i]]
		if i+1 < len(text) && symbolValues[text[i+1]] > value {
			total -= value
		} else {
			total += value
		}
	}
	return total
}

// IsRoman reports whether the text is a Roman numeral written the usual way.
func IsRoman(text string) bool {
	if text == "" {
		return false
	}
	for i := 0; i < len(text); i++ {
		if _, ok := symbolValues[text[i]]; !ok {
			return false
		}
	}
	written, err := ToRoman(FromRoman(text))
	return err == nil && written == text
}
