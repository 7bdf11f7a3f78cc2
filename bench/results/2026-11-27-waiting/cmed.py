import collections,statistics,sys
d=collections.defaultdict(list); vs=[]; bs=[]
for l in open(sys.argv[1]):
    p=l.split()
    if len(p)<3: continue
    b,v=p[0],p[1]
    if v not in vs: vs.append(v)
    if b not in bs: bs.append(b)
    x=p[2].split(':'); val=x[1] if len(x)>1 and x[1] and 'barrier' not in b else x[0]
    d[(b,v)].append(float(val))
print('%-15s'%'', ' '.join('%8s'%v for v in vs), '  ', ' '.join('%s/%s'%(vs[0],v) for v in vs[1:]))
for b in bs:
    m=[statistics.median(d[(b,v)]) if d[(b,v)] else float('nan') for v in vs]
    print('%-15s'%b, ' '.join('%8.2f'%x for x in m), '  ', ' '.join('%.2f'%(m[0]/x) for x in m[1:]))
