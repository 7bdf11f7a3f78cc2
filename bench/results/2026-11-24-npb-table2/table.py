import re,glob,os
rows=[]
seed={"EP":(0.00,16,50.51),"MG":(20.21,13653,0.02),"CG":(36.24,6103,47.89),"IS":(22.10,2794,97.15),"LU":(5.58,5672,8.66),"SP":(19.50,1657,42.55),"BT":(14.68,2020,45.22)}
for p in ["ep","mg","cg","is","lu","sp","bt","ft"]:
    f="/tmp/table2/%s.log"%p
    if not os.path.exists(f): continue
    t=open(f).read()
    m=re.search(r"Time in seconds =\s*([0-9.]+)",t)
    ok="SUCCESSFUL" in t and "UNSUCCESSFUL" not in t
    if not m: continue
    secs=float(m.group(1))
    msgs=byts=early=0
    per={}
    for l in t.splitlines():
        m2=re.match(r"ferry-stats rank=\d+ proto=(\w+) msgs=(\d+) bytes=(\d+)",l)
        if m2:
            msgs+=int(m2.group(2)); byts+=int(m2.group(3))
            per[m2.group(1)]=per.get(m2.group(1),[0,0]); per[m2.group(1)][0]+=int(m2.group(2)); per[m2.group(1)][1]+=int(m2.group(3))
        m3=re.search(r"early_direct_bytes=(\d+)",l)
        if m3: early+=int(m3.group(1))
    big=per.get("rndv_get",[0,0])[0]+per.get("rndv_put",[0,0])[0]
    s=seed.get(p.upper())
    rows.append("| %s | %.2f | %d | %.2f | %.0f | %.1f | %d | %s | %s |"%(p.upper(),secs,msgs,byts/1e6/secs,msgs/secs,100.0*early/byts if byts else 0,big,"yes" if ok else "NO",
        "%.2f / %d / %.2f"%s if s else "-"))
print("| program | time (s) | messages | MB/s | messages/s | write-protocol availability (% of bytes) | rendezvous msgs | verified | seed 002 (16 procs): MB/s / msgs/s / % |")
print("|---|---:|---:|---:|---:|---:|---:|---|---|")
print("\n".join(rows))
