// Command readfile prints the files named on its command line, or the
// error for each it cannot read. The release test builds it without cgo,
// so it runs in a root with no C library.
package main

import (
	"fmt"
	"os"
)

func main() {
	code := 0
	for _, p := range os.Args[1:] {
		b, err := os.ReadFile(p)
		if err != nil {
			fmt.Println("ERROR:", err)
			code = 1
			continue
		}
		os.Stdout.Write(b)
	}
	os.Exit(code)
}
