import sys
for f in sys.argv[1:]:
    t=open(f).read()
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
            v=dict(zip(hdr,c))
            if v['size'].endswith(' B'): continue
            pp=[k for k in hdr if k.startswith('push-pull')][0]
            r=float(v[pp])/min(float(v['push-zero']),float(v['push-all']))
            a=float(v['auto'])/min(float(v[k]) for k in hdr if k not in ('size','write','order held'))
            aw=float(v['auto'])/min(float(v[k]) for k in hdr if k not in ('size','order held'))
            w=float(v['write'])/float(v['push-zero'])
            wp=float(v['write'])/float(v[pp])
            out.append('%s %.2f/%.2f/%.2f/%.2f/%.2f'%(v['size'].replace(' ',''),r,a,aw,w,wp))
        print(f.split('/')[-2], sec[4:9], '(pp/best2, auto/best-nowrite, auto/best, write/pz, write/pp)', ' '.join(out))
