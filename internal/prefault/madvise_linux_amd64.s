#include "textflag.h"

// func madvise(addr, length, advice uintptr) uintptr
TEXT ·madvise(SB),NOSPLIT,$0-32
	MOVQ	addr+0(FP), DI
	MOVQ	length+8(FP), SI
	MOVQ	advice+16(FP), DX
	MOVQ	$28, AX	// SYS_madvise
	SYSCALL
	MOVQ	AX, ret+24(FP)
	RET
