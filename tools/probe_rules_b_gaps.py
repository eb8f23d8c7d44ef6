"""Probe host/device mixing idioms the ground truth leaves open (SYNC105, SYNC203).

Compact on purpose (it travels to the GPU machine inside one command line). Same method as
tools/probe_rules_b.py: warm-up, sync-debug-mode warnings, then host time behind a ~100 ms kernel.
Writes $OUT/gaps.json.
"""
import json,os,time,warnings,torch
d=torch.device('cuda')
def S():
 g=torch.arange(16.,device=d);c=torch.arange(16.)
 return dict(torch=torch,d=d,g=g,c=c,g0=torch.tensor(4,device=d),ci=torch.tensor([1,2]),cm=c>7,idx=torch.tensor([1,3],device=d))
C={'list_index':'g[[1,2]]','tuple_list_index':'g[[1,2],]','cpu_idx_write_scalar':'g.clone().__setitem__(ci,0.0)','cpu_idx_write_tensor':'g.clone().__setitem__(ci,torch.zeros(2,device=d))','cpu_mask_write_tensor':'g.clone().__setitem__(cm,torch.zeros((),device=d))','list_write_scalar':'g.clone().__setitem__([1,2],0.0)','index_put_cpu_value':'g.clone().index_put_((idx,),torch.tensor(0.0))','index_put_cpu_index':'g.clone().index_put_((ci,),torch.zeros(2,device=d))','index_fill_cpu_index':'g.clone().index_fill_(0,ci,0.0)','index_select_cpu_index':'g.index_select(0,ci)','tensor_dev_list_device':'torch.tensor([g0,g0],device=d)','stack_dev':'torch.stack([g0,g0])','cpu_slice_from_dev':'c.clone().__setitem__(slice(0,1),g[0:1])','cpu_copy_from_dev':'c.clone().copy_(g)','mul_cpu_0d':'g*torch.tensor(2.0)','where_cpu_0d':'torch.where(g>0,g,torch.tensor(0.0))','masked_fill_cpu_0d':'g.clone().masked_fill_(g>3,torch.tensor(0.0))','gather_cpu_idx':'g[ci[0]]','add_cpu_0d_inplace':'g.clone().add_(torch.tensor(1.0))','fill_cpu_0d':'g.clone().fill_(torch.tensor(1.0))','as_tensor_dev_list':'torch.as_tensor([g0,g0])'}
def M(f):
 try:f()
 except Exception as e:return dict(error=repr(e)[:150])
 torch.cuda.synchronize()
 with warnings.catch_warnings(record=True) as w:
  warnings.simplefilter('always');torch.cuda.set_sync_debug_mode('warn')
  try:f()
  finally:torch.cuda.set_sync_debug_mode('default')
 b=1e9
 for _ in range(2):
  torch.cuda.synchronize();torch.cuda._sleep(int(2e8));t=time.perf_counter();f();b=min(b,(time.perf_counter()-t)*1e3);torch.cuda.synchronize()
 return dict(syncs=sum('synchronizing' in str(x.message) for x in w),blocked_ms=round(b,3))
torch.zeros(1,device=d).sum().item();R=[]
for k,v in C.items():
 n=S();r=dict(name=k,code=v,**M(lambda:eval(v,n)));R.append(r);print(r)
json.dump(dict(torch=torch.__version__,gpu=torch.cuda.get_device_name(),rows=R),open(os.environ['OUT']+'/gaps.json','w'),indent=1)
