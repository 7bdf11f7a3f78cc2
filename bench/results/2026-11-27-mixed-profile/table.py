import sys,re,statistics,collections
exec(open('agg.py').read().split("cls=[")[0].replace("for l in open(sys.argv[1]):","for l in open(sys.argv[1]):",1))
cls=['fill','check','send','ssend','post','test','probe','precv','block']
mpi=['send','ssend','post','test','probe','precv','block']
names={'ferry':'Ferry','mpich':'MPICH','ompi':'Open MPI'}
for np,crit in ((2,1),(4,3)):
    print(f"\n{np} ranks, rank {crit} (ms per job, medians of {len([x for x in runs[('ferry',np)] if 't' in x])} runs; job time in s):\n")
    print("| | job (s) | "+" | ".join(cls)+" | MPI calls | ivcsw |")
    print("|---|---:|"+"---:|"*(len(cls)+2))
    for impl in ('ferry','mpich','ompi'):
        rs=[x for x in runs[(impl,np)] if 't' in x]
        med=lambda k: statistics.median(x['ranks'][crit][k] for x in rs)
        tot=statistics.median(sum(x['ranks'][crit][c+'_s'] for c in mpi) for x in rs)
        print(f"| {names[impl]} | {statistics.median(x['t'] for x in rs):.3f} | "+" | ".join(f"{med(c+'_s')*1e3:.1f}" for c in cls)+f" | {tot*1e3:.1f} | {med('ivcsw'):.0f} |")
