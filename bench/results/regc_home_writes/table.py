# Table of bench/run results, trap against auto (docs/regc.md "Tracked home writes"):
# python3 table.py DIR, DIR holding MODE-REP/results.jsonl or MODE-REP.jsonl.
import json,glob,sys,statistics as st
d=sys.argv[1]
rows={}
import os
for f in sorted(glob.glob(d+'/*-*/results.jsonl')+glob.glob(d+'/*-[0-9].jsonl')):
    mode=(f.split('/')[-2] if f.endswith('results.jsonl') else os.path.basename(f)).split('-')[0]
    for line in open(f):
        r=json.loads(line)
        k=(r['program']+':'+r.get('variant',''),r['protocol'])
        ks=r['kernel_stats']
        rows.setdefault(k,{}).setdefault(mode,[]).append(dict(fig=r.get('figure'),unit=r.get('figure_unit'),fetch=ks.get('pages_fetched'),wf=ks.get('write_faults'),msgs=ks.get('messages_sent'),kb=ks.get('bytes_sent')/1024,upd=ks.get('updates_applied'),hwt=ks.get('home_writes_tracked'),twins=ks.get('twins')))
print("| program | protocol | mode | median figure | unit | page fetches | write faults | updates applied | home writes tracked | messages | KB sent |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for k,v in sorted(rows.items()):
    for m in ('trap','auto'):
        L=v.get(m,[])
        if not L: continue
        med=lambda key: st.median([x[key] for x in L])
        rng=lambda key: "%s" % ("/".join(str(x[key]) for x in L)) 
        print("| %s | %s | %s | %.4g | %s | %s | %s | %s | %s | %s | %.0f |"%(k[0],k[1],m,med('fig'),L[0]['unit'],rng('fetch'),rng('wf'),rng('upd'),rng('hwt'),rng('msgs'),med('kb')))
