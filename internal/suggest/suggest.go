// Package suggest finds the known name nearest to a mistyped one, for
// "did you mean" in error messages (config keys and tables, model ids).
// It owns the distance alone: callers decide what is known and how the
// suggestion is worded.
package suggest

// Closest is the name of known nearest to got by edit distance, when it
// is at most maxDistance away (the first of equally near ones); "" when
// none is that near.
func Closest(got string, known []string, maxDistance int) string {
	best, bestD := "", maxDistance+1
	for _, k := range known {
		if d := Distance(got, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// Distance is the Levenshtein distance of a and b, in bytes.
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
