#!/usr/bin/env python3
"""Checks backends/gpu/flash_attention.cu's fragment arithmetic without a GPU.

Emulates the kernel lane by lane: ldmatrix (plain and transposed) and
mma.sync.m16n8k16 with the fragment layouts of PTX's ISA, the kernel's own
index arithmetic (transcribed: keep the two in step when the kernel
changes), then compares with a reference attention in f64 (grouped query
heads, two batches, partial query blocks and key tiles). The error is the
weights' f16 rounding, about 2e-4.

  /usr/bin/python3 tools/gpu/emulate_flash_attention.py
"""
import numpy as np
rng = np.random.default_rng(0)
PAD=8; WARPS=2; ROWS=16*WARPS; KEYS=64

def ldmatrix(addr, trans):  # addr[lane] = (array, row, col): 8 consecutive elements
    regs=[[None]*4 for _ in range(32)]
    for m in range(4):
        M=np.array([addr[8*m+r][0][addr[8*m+r][1], addr[8*m+r][2]:addr[8*m+r][2]+8] for r in range(8)])
        for i in range(32):
            if trans: regs[i][m]=(M[2*(i%4)][i//4], M[2*(i%4)+1][i//4])
            else: regs[i][m]=(M[i//4][2*(i%4)], M[i//4][2*(i%4)+1])
    return regs

def mma(d, a, b0, b1):  # per-lane lists: d[lane][4], a[lane][4] pairs, b0/b1[lane] pairs
    A=np.zeros((16,16)); B=np.zeros((16,8)); C=np.zeros((16,8))
    for l in range(32):
        g,t=l//4,l%4
        A[g,2*t:2*t+2]=a[l][0]; A[g+8,2*t:2*t+2]=a[l][1]; A[g,2*t+8:2*t+10]=a[l][2]; A[g+8,2*t+8:2*t+10]=a[l][3]
        B[2*t:2*t+2,g]=b0[l]; B[2*t+8:2*t+10,g]=b1[l]
        C[g,2*t:2*t+2]=d[l][0:2]; C[g+8,2*t:2*t+2]=d[l][2:4]
    D=A.astype(np.float16).astype(np.float64)@B.astype(np.float16).astype(np.float64)+C
    for l in range(32):
        g,t=l//4,l%4
        d[l][0:2]=D[g,2*t:2*t+2]; d[l][2:4]=D[g+8,2*t:2*t+2]

def kernel(q,k,v,y,S,head,bx,batch,H,scale_log2):
    qh,kh=S['q_heads'],S['kv_heads']; kvh=head//(qh//kh)
    def tile(x,row,first,length,rows,off):
        t=np.zeros((rows,H+PAD))
        for r in range(rows):
            if first+r<length: t[r,:H]=x[batch*S[length_key[id(x)]]*row+(first+r)*row+off: batch*S[length_key[id(x)]]*row+(first+r)*row+off+H]
        return t
    first_row=bx*ROWS
    Q=tile(q,S['q_row'],first_row,S['q_length'],ROWS,head*H)
    for warp in range(WARPS):
        query=[]
        for s in range(H//16):
            query.append(ldmatrix([(Q, warp*16+l%8+(l//8)%2*8, s*16+l//16*8) for l in range(32)], False))
        row_max=[[-np.inf]*2 for _ in range(32)]; row_sum=[[0.0]*2 for _ in range(32)]
        out=[[[0.0]*4 for _ in range(32)] for _ in range(H//8)]
        for start in range(0,S['kv_length'],KEYS):
            K=tile(k,S['k_row'],start,S['kv_length'],KEYS,kvh*H); V=tile(v,S['v_row'],start,S['kv_length'],KEYS,kvh*H)
            scores=[[[0.0]*4 for _ in range(32)] for _ in range(KEYS//8)]
            for s in range(H//16):
                for j in range(0,KEYS//8,2):
                    b=ldmatrix([(K,(j+l//16)*8+l%8, s*16+(l//8)%2*8) for l in range(32)], False)
                    mma(scores[j],[query[s][l] for l in range(32)],[b[l][0] for l in range(32)],[b[l][1] for l in range(32)])
                    mma(scores[j+1],[query[s][l] for l in range(32)],[b[l][2] for l in range(32)],[b[l][3] for l in range(32)])
            for l in range(32):
                quad=l%4
                for j in range(KEYS//8):
                    for e in range(4):
                        key=start+j*8+quad*2+e%2
                        scores[j][l][e]=scores[j][l][e]*scale_log2 if key<S['kv_length'] else -np.inf
            tile_max=[[max(scores[j][l][e] for j in range(KEYS//8) for e in (2*r,2*r+1)) for r in range(2)] for l in range(32)]
            for l in range(32):  # quad shuffles
                base=l-l%4
                for r in range(2):
                    tm=max(tile_max[base+i][r] for i in range(4))
                    nm=max(row_max[l][r],tm)
                    resc=2.0**(row_max[l][r]-nm) if row_max[l][r]!=-np.inf else 0.0
                    row_max[l][r]=nm; row_sum[l][r]*=resc
                    for j in range(H//8):
                        for e in (2*r,2*r+1): out[j][l][e]*=resc
            for l in range(32):
                for j in range(KEYS//8):
                    for e in range(4):
                        scores[j][l][e]=2.0**(scores[j][l][e]-row_max[l][e//2]); row_sum[l][e//2]+=scores[j][l][e]
            for s in range(KEYS//16):
                weight=[[(scores[2*s][l][0],scores[2*s][l][1]),(scores[2*s][l][2],scores[2*s][l][3]),(scores[2*s+1][l][0],scores[2*s+1][l][1]),(scores[2*s+1][l][2],scores[2*s+1][l][3])] for l in range(32)]
                for j in range(0,H//8,2):
                    b=ldmatrix([(V, s*16+(l//8)%2*8+l%8, (j+l//16)*8) for l in range(32)], True)
                    mma(out[j],weight,[b[l][0] for l in range(32)],[b[l][1] for l in range(32)])
                    mma(out[j+1],weight,[b[l][2] for l in range(32)],[b[l][3] for l in range(32)])
        sums=[[sum(row_sum[l-l%4+i][r] for i in range(4)) for r in range(2)] for l in range(32)]
        for l in range(32):
            g,quad=l//4,l%4
            for r in range(2):
                row=first_row+warp*16+g+r*8
                if row>=S['q_length']: continue
                for j in range(H//8):
                    o=(batch*S['q_length']+row)*S['y_row']+head*H+j*8+quad*2
                    y[o]=out[j][l][2*r]/sums[l][r]; y[o+1]=out[j][l][2*r+1]/sums[l][r]

H=64; qh,kh=4,2; B=2; sq,skv=37,70
S=dict(q_heads=qh,kv_heads=kh,q_length=sq,kv_length=skv,q_row=qh*H,k_row=kh*H,v_row=kh*H,y_row=qh*H)
q=rng.standard_normal(B*sq*qh*H).astype(np.float16).astype(np.float64)
k=rng.standard_normal(B*skv*kh*H).astype(np.float16).astype(np.float64)
v=rng.standard_normal(B*skv*kh*H).astype(np.float16).astype(np.float64)
length_key={id(q):'q_length',id(k):'kv_length',id(v):'kv_length'}
y=np.full(B*sq*qh*H,np.nan); scale=0.125
for batch in range(B):
    for head in range(qh):
        for bx in range((sq+ROWS-1)//ROWS):
            kernel(q,k,v,y,S,head,bx,batch,H,scale*1.4426950408889634)
Q=q.reshape(B,sq,qh,H); K=k.reshape(B,skv,kh,H); Vv=v.reshape(B,skv,kh,H)
ref=np.zeros((B,sq,qh,H))
for b in range(B):
    for h in range(qh):
        s=Q[b,:,h]@K[b,:,h//(qh//kh)].T*scale; p=np.exp(s-s.max(1,keepdims=True)); p/=p.sum(1,keepdims=True)
        ref[b,:,h]=p@Vv[b,:,h//(qh//kh)]
err=np.abs(y.reshape(ref.shape)-ref).max()
print("unwritten:", int(np.isnan(y).sum()), "max error:", err)
assert not np.isnan(y).any() and err < 1e-3
