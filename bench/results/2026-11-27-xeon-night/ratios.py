import sys,re
t=open(sys.argv[1]).read()
for sec in ['### Early receiver','### Late receiver']:
    s=t[t.index(sec):].split('\n')[1:]
    i=0
    while not s[i].startswith('|'): i+=1
    lines=[]
    while s[i].startswith('|'): lines.append(s[i]); i+=1
    hdr=[h.strip() for h in lines[0].split('|')[1:-1]]
    out=[]
    for l in lines[2:]:
        c=[x.strip() for x in l.split('|')[1:-1]]
        size=c[0]; vals=dict(zip(hdr[1:],c[1:]))
        nums={k:float(v) for k,v in vals.items() if k!='order held'}
        best=min(v for k,v in nums.items() if k!='write')
        if size in ('1 KiB','2 KiB','4 KiB') or size.endswith(' B'): continue
        out.append('%s auto %.2f wr/pz %.2f'%(size.replace(' ',''), nums['auto']/best, nums['write']/nums['push-zero']))
    print(sec[4:9], ' | '.join(out))
