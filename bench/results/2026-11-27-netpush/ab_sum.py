import csv,statistics,collections,glob,sys
d=sys.argv[1] if len(sys.argv)>1 else '/tmp/s24/ab'
med=statistics.median
for net in ['tcp','ofi']:
    print(f"### {net}")
    el=collections.defaultdict(list)
    for b in ['base','new']:
        for f in glob.glob(f'{d}/el_{b}_{net}_*.csv'):
            for row in csv.DictReader(open(f)):
                if row.get('size'):
                    el[(b,row['mode'],int(row['size']))].append(float(row['comm_us']))
    print("| early/late | size | before (us) | after (us) | after/before |")
    print("|---|---:|---:|---:|---:|")
    for mode in ['early','late']:
        for s in sorted({k[2] for k in el}):
            a=med(el[('base',mode,s)]); n=med(el[('new',mode,s)])
            print(f"| {mode} | {s} | {a:.1f} | {n:.1f} | {n/a:.2f} |")
    for kind,unit in [('lat','us'),('bw','MB/s')]:
        v=collections.defaultdict(list)
        for b in ['base','new']:
            for f in glob.glob(f'{d}/{kind}_{b}_{net}_*.txt'):
                for line in open(f):
                    p=line.split()
                    if len(p)>=2 and p[0].isdigit():
                        v[(b,int(p[0]))].append(float(p[1]))
        print(f"| {kind} | size | before ({unit}) | after ({unit}) | after/before |")
        print("|---|---:|---:|---:|---:|")
        for s in sorted({k[1] for k in v}):
            a=med(v[('base',s)]); n=med(v[('new',s)])
            print(f"| {kind} | {s} | {a:.2f} | {n:.2f} | {n/a:.2f} |")
