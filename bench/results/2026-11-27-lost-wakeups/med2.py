import sys,statistics,collections
d=collections.defaultdict(lambda: collections.defaultdict(list)); order=[]; bo=[]
for l in open(sys.argv[1]):
    p=l.split()
    if len(p)<3: continue
    try: v=float(p[-1])
    except: continue
    b,lab=p[0],' '.join(p[1:-1])
    if lab not in order: order.append(lab)
    if b not in bo: bo.append(b)
    d[b][lab].append(v)
print("bench", "  ".join(order))
for b in bo:
    base=statistics.median(d[b][order[0]])
    print(f"{b:12s}", "  ".join(f"{statistics.median(d[b][lab]):.4g} ({statistics.median(d[b][lab])/base:.2f})" for lab in order), f" n={len(d[b][order[0]])}")
