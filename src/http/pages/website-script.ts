/**
 * The store website's one script (issue 15 item 3: "a small script for the cart"), inlined with the
 * page's CSP nonce. It only enhances: every form works without it. Adding to the cart posts the same
 * form in the background (the server answers JSON to `Accept: application/json`) and updates the
 * cart count in place instead of reloading; any failure falls back to the plain form post.
 */
export const WEBSITE_SCRIPT = `document.addEventListener('submit',async function(e){
var f=e.target;if(!f.matches||!f.matches('[data-add-to-cart]'))return;e.preventDefault();
var b=f.querySelector('[type=submit]');if(b)b.disabled=true;
try{var r=await fetch(f.action,{method:'POST',body:new URLSearchParams(new FormData(f)),headers:{Accept:'application/json'},credentials:'same-origin'});
var j=await r.json();document.querySelectorAll('[data-cart-count]').forEach(function(n){n.textContent=j.item_count});
var s=f.querySelector('[data-status]');if(!s){s=document.createElement('p');s.setAttribute('role','status');s.setAttribute('data-status','');f.appendChild(s)}
s.textContent=j.message}catch(x){f.submit()}finally{if(b)b.disabled=false}});`.replace(/\n/g, '')
