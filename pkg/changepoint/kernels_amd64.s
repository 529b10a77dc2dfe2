//go:build amd64 && !purego

#include "textflag.h"

DATA absmask<>+0(SB)/8, $0x7fffffffffffffff
GLOBL absmask<>(SB), RODATA|NOPTR, $8

// func fourRowsAVX(k *rowKernel)
//
// Lanes 0…3 are rows a−3 … a. Per column b: the running sums r (one per
// row) grow by |z_row − z_{b−1}| in one vector operation; then, in scalar
// operations in the order of the recurrence, W(a, b) = W(a+1, b) + r_a,
// W(a−1, b) = W(a, b) + r_{a−1}, …; the four W go to their rows and,
// multiplied by 1/(b−row−1), to V's column b as one vector.
TEXT ·fourRowsAVX(SB), NOSPLIT, $0-8
	MOVQ k+0(FP), AX
	VMOVUPD 0(AX), Y0               // z_{a−3} … z_a
	VMOVUPD 32(AX), Y4              // r_{a−3} … r_a
	VBROADCASTSD absmask<>(SB), Y1
	MOVQ 64(AX), SI                 // &z_{b0−1}
	MOVQ 72(AX), DX                 // columns
	MOVQ 80(AX), R8                 // &W(a+1, b0)
	MOVQ 88(AX), R9                 // &W(a, b0)
	MOVQ 96(AX), R10                // &W(a−1, b0)
	MOVQ 104(AX), R11               // &W(a−2, b0)
	MOVQ 112(AX), R12               // &W(a−3, b0)
	MOVQ 120(AX), R13               // &1/(b0−a+2), then 1/(b0−a+1) …
	MOVQ 128(AX), DI                // &V(a−3, b0)
	MOVQ 136(AX), BX                // bytes from one column of V to the next
	XORQ CX, CX
	TESTQ DX, DX
	JEQ done

loop:
	VBROADCASTSD (SI)(CX*8), Y2
	VSUBPD Y2, Y0, Y3
	VANDPD Y1, Y3, Y3
	VADDPD Y3, Y4, Y4               // r += |z_row − z_{b−1}|
	VUNPCKHPD X4, X4, X5            // r_{a−2}
	VEXTRACTF128 $1, Y4, X6         // r_{a−1}
	VUNPCKHPD X6, X6, X7            // r_a
	VADDSD (R8)(CX*8), X7, X8       // W(a, b)
	VADDSD X6, X8, X9               // W(a−1, b)
	VADDSD X5, X9, X10              // W(a−2, b)
	VADDSD X4, X10, X11             // W(a−3, b)
	VMOVSD X8, (R9)(CX*8)
	VMOVSD X9, (R10)(CX*8)
	VMOVSD X10, (R11)(CX*8)
	VMOVSD X11, (R12)(CX*8)
	VUNPCKLPD X10, X11, X12         // W(a−3, b), W(a−2, b)
	VUNPCKLPD X8, X9, X13           // W(a−1, b), W(a, b)
	VINSERTF128 $1, X13, Y12, Y12
	VMULPD (R13), Y12, Y12
	VMOVUPD Y12, (DI)               // V(a−3, b) … V(a, b)
	ADDQ BX, DI
	SUBQ $8, R13
	INCQ CX
	CMPQ CX, DX
	JLT loop

done:
	VMOVUPD Y4, 32(AX)
	VZEROUPPER
	RET

// func scan2AVX(v, a, b *float64, n int, thrA, thrB float64) int
TEXT ·scan2AVX(SB), NOSPLIT, $0-56
	MOVQ v+0(FP), SI
	MOVQ a+8(FP), R8
	MOVQ b+16(FP), R9
	MOVQ n+24(FP), DX
	VBROADCASTSD thrA+32(FP), Y0
	VBROADCASTSD thrB+40(FP), Y1
	XORQ CX, CX
	CMPQ CX, DX
	JGE none

scan:
	VMOVUPD (SI)(CX*8), Y2
	VADDPD (R8)(CX*8), Y2, Y3
	VADDPD (R9)(CX*8), Y2, Y4
	VCMPPD $1, Y0, Y3, Y3           // v + a < thrA
	VCMPPD $1, Y1, Y4, Y4           // v + b < thrB
	VORPD Y3, Y4, Y3
	VMOVMSKPD Y3, AX
	TESTL AX, AX
	JNE found
	ADDQ $4, CX
	CMPQ CX, DX
	JLT scan

none:
	MOVQ DX, ret+48(FP)
	VZEROUPPER
	RET

found:
	BSFL AX, AX
	ADDQ CX, AX
	MOVQ AX, ret+48(FP)
	VZEROUPPER
	RET
