#include "textflag.h"

// func madvise(addr, length, advice uintptr) uintptr
TEXT ·madvise(SB),NOSPLIT,$0-32
	MOVD	addr+0(FP), R0
	MOVD	length+8(FP), R1
	MOVD	advice+16(FP), R2
	MOVD	$233, R8	// SYS_madvise
	SVC
	MOVD	R0, ret+24(FP)
	RET
