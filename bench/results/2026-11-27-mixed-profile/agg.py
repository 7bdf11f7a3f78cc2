import sys,re,statistics,collections
runs=collections.defaultdict(list)  # (impl,np) -> list of dict(rank->dict), time
cur=None
for l in open(sys.argv[1]):
    m=re.match(r"=== (.+) np=(\d+) ",l)
    if m: cur=(m.group(1),int(m.group(2))); runs[cur].append({'ranks':{}}); continue
    if l.startswith('# profile'):
        d=dict(kv.split('=') for kv in l.split()[2:])
        r=int(d.pop('rank')); runs[cur][-1]['ranks'][r]={k:float(v) for k,v in d.items()}
    m=re.match(r'mixed time_s=([0-9.]+)',l)
    if m: runs[cur][-1]['t']=float(m.group(1))
IMPLS=sys.argv[2].split(',') if len(sys.argv)>2 else ['ferry','mpich','ompi']
cls=['fill','check','send','ssend','post','test','probe','precv','block']
for np in (2,4):
    print(f"\n## {np} ranks")
    for impl in IMPLS:
        rs=[x for x in runs[(impl,np)] if 't' in x]
        if not rs: continue
        t=statistics.median(x['t'] for x in rs)
        cpu=statistics.median(sum(v['user_s']+v['sys_s'] for v in x['ranks'].values()) for x in rs)
        print(f"{impl}: n={len(rs)} time {t:.4f} s, CPU all ranks {cpu:.4f} s")
        for r in range(np):
            med=lambda k: statistics.median(x['ranks'][r][k] for x in rs)
            print(f"  rank {r}: user {med('user_s'):.4f} sys {med('sys_s'):.4f} ivcsw {med('ivcsw'):.0f} | "+" ".join(f"{c} {med(c+'_s')*1e3:.1f}ms/{med(c+'_n'):.0f}" for c in cls))
