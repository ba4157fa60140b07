console.log('gatehouse example');
