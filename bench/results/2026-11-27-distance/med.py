import sys,re,statistics as st
d={}
cur=None
for l in open(sys.argv[1]):
    m=re.match(r'=== (\S+) d=(\d+) round=(\d+)',l)
    if m: cur=(m.group(1),int(m.group(2))); continue
    p=l.split()
    if cur and len(p)==2:
        try: d.setdefault((cur[0],cur[1],int(p[0])),[]).append(float(p[1]))
        except: pass
impls=['ferry','ferryoff','mpich','ompi']
sizes=sorted({k[2] for k in d})
for dd in (0,16):
    print(f"\ndistance {dd}: one-way latency, us, median of rounds")
    print("| size | Ferry | Ferry, FERRY_COPY_ALIAS=off | MPICH | Open MPI | Ferry / best peer |")
    print("|---:|---:|---:|---:|---:|---:|")
    for s in sizes:
        v=[st.median(d.get((i,dd,s),[float('nan')])) for i in impls]
        print(f"| {s} | {v[0]:.2f} | {v[1]:.2f} | {v[2]:.2f} | {v[3]:.2f} | {v[0]/min(v[2],v[3]):.2f} |")
