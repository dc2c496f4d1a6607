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

// Distance is the edit distance of a and b, in bytes, with two
// neighbouring letters swapped counting as one edit (the optimal string
// alignment distance): "modle" is one edit from "model", as it is from
// "mode", where plain Levenshtein put model two away and offered mode
// alone.
func Distance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
