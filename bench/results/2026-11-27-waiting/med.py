import collections,statistics,sys
d=collections.defaultdict(lambda: collections.defaultdict(list))
order=[]
for l in open(sys.argv[1]):
    p=l.split()
    if not p: continue
    if p[0] not in order: order.append(p[0])
    for i,c in enumerate(p[1:]):
        k,_,v=c.partition(':')
        if not v: k,v=str(i),k
        try: d[p[0]][k].append(float(v))
        except: pass
keys=[]
for n in order:
    for k in d[n]:
        if k not in keys: keys.append(k)
print('%-10s'%'', ' '.join('%10s'%k for k in keys))
for n in order:
    print('%-10s'%n, ' '.join('%10.4g'%statistics.median(d[n][k]) if d[n][k] else '%10s'%'-' for k in keys))
