/**
 * The store website's one script (issue 15 item 3: "a small script for the cart"), inlined with the
 * page's CSP nonce. It only enhances: every form works without it. Adding to the cart posts the same
 * form in the background (the server answers JSON to `Accept: application/json`) and updates the
 * cart count in place instead of reloading; any failure falls back to the plain form post. On the
 * checkout (`form[data-checkout]`, issue 34 item 6) it keeps the breakdown true as the customer
 * chooses: the tip, the chosen saved address's delivery fee, and the total with both, in the store's
 * currency (without it the page shows the cart's total and "by address" for the fee).
 */
export const WEBSITE_SCRIPT = `document.addEventListener('submit',async function(e){
var f=e.target;if(!f.matches||!f.matches('[data-add-to-cart]'))return;e.preventDefault();
var b=f.querySelector('[type=submit]');if(b)b.disabled=true;
try{var r=await fetch(f.action,{method:'POST',body:new URLSearchParams(new FormData(f)),headers:{Accept:'application/json'},credentials:'same-origin'});
var j=await r.json();document.querySelectorAll('[data-cart-count]').forEach(function(n){n.textContent=j.item_count});
var s=f.querySelector('[data-status]');if(!s){s=document.createElement('p');s.setAttribute('role','status');s.setAttribute('data-status','');f.appendChild(s)}
s.textContent=j.message}catch(x){f.submit()}finally{if(b)b.disabled=false}});
function total(f){var cur=f.getAttribute('data-currency')||'USD',fmt;
try{fmt=new Intl.NumberFormat('en',{style:'currency',currency:cur})}catch(x){fmt=new Intl.NumberFormat('en',{minimumFractionDigits:2})}
var u=Math.pow(10,fmt.resolvedOptions().maximumFractionDigits),m=function(n){return fmt.format(n/u)};
var t=f.querySelector('[name=type]:checked')||f.querySelector('select[name=type]'),type=t?t.value:'';
var ti=f.querySelector('[name=tip]'),tip=ti&&ti.value?Math.round(parseFloat(ti.value)*u):0;if(!(tip>=0))tip=0;
var fee=0;if(type==='delivery'){fee=null;var na=f.querySelector('[name=address]'),sel=f.querySelector('select[name=address_id]');
if(!(na&&na.value.trim())&&sel&&sel.selectedOptions[0]&&sel.selectedOptions[0].getAttribute('data-fee')!==''){fee=Number(sel.selectedOptions[0].getAttribute('data-fee'))}}
var set=function(q,v){var n=f.querySelector(q);if(n)n.textContent=v};
set('[data-amount=tip]',m(tip));set('[data-amount=delivery_fee]',fee===null?'by address':m(fee));
set('[data-total]',m(Number(f.getAttribute('data-base'))+tip+(fee||0))+(fee===null?' + delivery':''))}
function retotal(e){var f=e.target&&e.target.closest&&e.target.closest('form[data-checkout]');if(f)total(f)}
document.addEventListener('input',retotal);document.addEventListener('change',retotal);
document.querySelectorAll('form[data-checkout]').forEach(total);`.replace(/\n/g, '')
